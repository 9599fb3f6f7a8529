// Invisible target starter bot (C++, g++ 12).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line:
//   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
//   since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
// (the board wraps around). Moving into a wall, or into a cell another bot
// also wants, leaves you where you are. 50 ms per move, or you stay.
// Nothing is sent at the end: stdin closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.cpp   (watch: add --open)
#include <chrono>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

const int N = 32, CELLS = N * N, NO_WALL = 1024;
const int DIRS[4] = {0, 1, 3, 4};   // up, left, right, down (2 = stay)
std::vector<bool> wall(CELLS);      // walls never go away: remember them all

// The cell reached from p going d, wrapping around the edges.
int step(int p, int d) {
    int r = p / N, c = p % N;
    if (d == 0) r = (r + N - 1) % N;
    else if (d == 1) c = (c + N - 1) % N;
    else if (d == 3) c = (c + 1) % N;
    else if (d == 4) r = (r + 1) % N;
    return r * N + c;
}

// Walking distance (a BFS around walls) from start to the farthest likely
// target: a dead end (a cell with at most one open side) that no other bot
// stands on; while there are none, the farthest reachable cell.
int farthest(int start, const std::vector<bool>& enemy) {
    std::vector<int> dist(CELLS, -1), todo{start};
    dist[start] = 0;
    int far_dead_end = -1;
    for (size_t i = 0; i < todo.size(); i++) {
        int p = todo[i], open_sides = 0;
        for (int d : DIRS) {
            int q = step(p, d);
            if (wall[q]) continue;
            open_sides++;
            if (dist[q] < 0) { dist[q] = dist[p] + 1; todo.push_back(q); }
        }
        if (open_sides <= 1 && !enemy[p]) far_dead_end = dist[p];
    }
    // A BFS meets the farthest cells last.
    return far_dead_end >= 0 ? far_dead_end : dist[todo.back()];
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it). A wall can always fill a dead end unless a bot or the
// target is on it, so the dead ends that stay open are where the target hides:
// at the very end it is the only one no bot stands on. So stand where the
// farthest such dead end is nearest (early on, when there are none: at the
// centre of the area), and follow that spot as walls close in.
// This is the place to do better: weigh dead ends by how long they have stayed
// open, keep out of other bots' way or block them...
int main() {
    std::mt19937 rng(std::chrono::steady_clock::now().time_since_epoch().count());
    std::string line;
    long turn = 0;
    int last_pos = -1, last_move = 2;
    while (std::getline(std::cin, line)) {
        std::istringstream in(line);
        int pos, new_wall, e;
        in >> pos >> new_wall;
        std::vector<bool> enemy(CELLS);     // the other bots, this turn
        while (in >> e) enemy[e] = true;
        turn++;
        if (new_wall != NO_WALL) wall[new_wall] = true;
        int best = 2, best_far = farthest(pos, enemy);   // staying is the default
        for (int d : DIRS) {
            int q = step(pos, d);
            if (wall[q] || enemy[q]) continue;  // that move would fail
            int far = farthest(q, enemy);
            if (far < best_far) { best = d; best_far = far; }
        }
        // A move that did not happen means another bot wanted the same cell; if
        // both insist, neither ever moves again. So after one, wait half the time.
        if (last_move != 2 && pos == last_pos && rng() % 2) best = 2;
        last_pos = pos;
        last_move = best;
        if (new_wall != NO_WALL)
            std::cerr << "turn " << turn << ": wall at " << new_wall << ", I'm at " << pos << ", move "
                      << best << ", farthest likely target " << best_far << " steps away\n";
        std::cout << best << std::endl;     // std::endl flushes
    }
    return 0;
}
