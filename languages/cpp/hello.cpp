#include <iostream>
int main() { std::cout << "hello from cpp" << std::endl; return 0; }
