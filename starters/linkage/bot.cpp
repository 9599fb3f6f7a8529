// Linkage starter bot (C++17, g++ 12, standard library only).
// Two players, More and Fewer, take turns laying shared coloured dominoes
// (6 each of R B G Y) on a 7x7 board; at the end More wins with 12 or more
// one-colour groups, Fewer with fewer than 12.
// Protocol: a NEW process is started every turn in your folder. Read
// input.txt: "M6666" (M = you are More, F = Fewer; then dominoes left in
// R B G Y) and 7 rows of '.' empty, 'X' centre, 'x' empty but touching the
// opponent's last domino (forbidden), RBGY played. Write order.txt: colour
// + two adjacent cells, column A-G then row 1-7 from the top ("YA1A2"), or
// "Skip" only when nothing fits. 5 s per turn. Started with any argument,
// print one id line on stdout instead. Stderr is for debugging: koth shows
// it beside your moves in the replay.
// Try it:  koth match --game linkage bot.cpp   (watch: add --open)
#include <fstream>
#include <iostream>
#include <string>
#include <vector>
using namespace std;

vector<string> grid(7);  // grid[row][col], row 0 is row 1

// How many cells next to the domino (r,c)-(r2,c2) already hold `colour`.
int touching(char colour, int r, int c, int r2, int c2) {
    const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    const int cells[2][2] = {{r, c}, {r2, c2}};
    int n = 0;
    for (auto &cell : cells)
        for (auto &dd : d) {
            int rr = cell[0] + dd[0], cc = cell[1] + dd[1];
            if (rr < 0 || rr >= 7 || cc < 0 || cc >= 7) continue;
            if ((rr == r && cc == c) || (rr == r2 && cc == c2)) continue;
            if (grid[rr][cc] == colour) n++;
        }
    return n;
}

int main(int argc, char **argv) {
    if (argc > 1) { cout << "StarterCpp. koth starter kit (C++), v1" << endl; return 0; }
    ifstream in("input.txt");
    string head;  // "M6666": role, then dominoes left in R B G Y
    in >> head;
    for (auto &row : grid) in >> row;
    if (!in) return 1;
    char me = head[0];  // 'M' (More) or 'F' (Fewer)
    const string colours = "RBGY";

    // Strategy: More wants many groups, so it lays the domino touching the
    // fewest cells of its own colour; Fewer wants few groups, so it touches
    // the most. First found wins ties. This is the place to do better: look
    // ahead, count real groups, block the opponent with your 'x' zone...
    string order = "Skip";  // legal only when nothing fits
    bool found = false;
    int best_score = 0;
    for (int k = 0; k < 4; k++) {
        if (head[1 + k] == '0') continue;  // none of this colour left
        for (int r = 0; r < 7; r++)
            for (int c = 0; c < 7; c++)
                for (int o = 0; o < 2; o++) {  // o = 0: right, 1: down
                    int r2 = r + o, c2 = c + 1 - o;
                    // Only '.' is free: 'x' touches the opponent's last domino.
                    if (r2 > 6 || c2 > 6 || grid[r][c] != '.' || grid[r2][c2] != '.') continue;
                    int t = touching(colours[k], r, c, r2, c2);
                    int score = me == 'M' ? -t : t;
                    if (!found || score > best_score) {
                        found = true, best_score = score;
                        order = string{colours[k], char('A' + c), char('1' + r), char('A' + c2), char('1' + r2)};
                    }
                }
    }

    cerr << me << ' ' << head.substr(1) << ": " << order << " (score " << best_score << ")" << endl;
    ofstream out("order.txt");  // read once this process exits
    out << order << "\n";
    return 0;
}
