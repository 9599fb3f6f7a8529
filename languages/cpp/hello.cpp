// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
#include <iostream>
#include <string>

int main() {
    std::cerr << "hello from cpp" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
        if (line == "M") std::cout << "0 0 0 0" << std::endl;
    }
    return 0;
}
