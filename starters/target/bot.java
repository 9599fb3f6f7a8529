// Invisible target starter bot (Java, OpenJDK 17). The class must be `bot`.
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
// Try it:  koth match --game target bot.java   (watch: add --open)
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.util.Arrays;
import java.util.Random;
import java.util.StringTokenizer;

public class bot {
    static final int N = 32, CELLS = N * N, NO_WALL = 1024;
    static final int[] DIRS = {0, 1, 3, 4};             // up, left, right, down (2 = stay)
    static final boolean[] wall = new boolean[CELLS];   // walls never go away: remember them all
    static final boolean[] enemy = new boolean[CELLS];  // the other bots, this turn

    // The cell reached from p going d, wrapping around the edges.
    static int step(int p, int d) {
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
    static final int[] dist = new int[CELLS], todo = new int[CELLS]; // reused: no garbage
    static int farthest(int start) {
        Arrays.fill(dist, -1);
        int head = 0, tail = 0, farDeadEnd = -1;
        dist[start] = 0;
        todo[tail++] = start;
        while (head < tail) {
            int p = todo[head++], openSides = 0;
            for (int d : DIRS) {
                int q = step(p, d);
                if (wall[q]) continue;
                openSides++;
                if (dist[q] < 0) { dist[q] = dist[p] + 1; todo[tail++] = q; }
            }
            if (openSides <= 1 && !enemy[p]) farDeadEnd = dist[p];
        }
        // A BFS meets the farthest cells last.
        return farDeadEnd >= 0 ? farDeadEnd : dist[todo[tail - 1]];
    }

    // Strategy: the target is somewhere in the area we can reach (walls never cut
    // a bot off from it). A wall can always fill a dead end unless a bot or the
    // target is on it, so the dead ends that stay open are where the target hides:
    // at the very end it is the only one no bot stands on. So stand where the
    // farthest such dead end is nearest (early on, when there are none: at the
    // centre of the area), and follow that spot as walls close in.
    // This is the place to do better: weigh dead ends by how long they have stayed
    // open, keep out of other bots' way or block them...
    static int choose(int pos) {
        int best = 2, bestFar = farthest(pos);     // staying is the default
        for (int d : DIRS) {
            int q = step(pos, d);
            if (wall[q] || enemy[q]) continue;     // that move would fail
            int far = farthest(q);
            if (far < bestFar) { best = d; bestFar = far; }
        }
        return best;
    }

    public static void main(String[] args) throws IOException {
        // Java's first String.format (or "a" + b) loads many classes, ~20 ms of a
        // 50 ms move: pay for it now, while the first move has 1 s extra.
        System.err.println(String.format("bot.java started, %d cells", CELLS));
        Random random = new Random();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        long turn = 0;
        int lastPos = -1, lastMove = 2;
        while ((line = in.readLine()) != null) {
            StringTokenizer f = new StringTokenizer(line);
            int pos = Integer.parseInt(f.nextToken()), newWall = Integer.parseInt(f.nextToken());
            Arrays.fill(enemy, false);
            while (f.hasMoreTokens()) enemy[Integer.parseInt(f.nextToken())] = true;
            turn++;
            if (newWall != NO_WALL) wall[newWall] = true;
            int best = choose(pos);
            // A move that did not happen means another bot wanted the same cell; if
            // both insist, neither ever moves again. So after one, wait half the time.
            if (lastMove != 2 && pos == lastPos && random.nextBoolean()) best = 2;
            lastPos = pos;
            lastMove = best;
            if (newWall != NO_WALL)
                System.err.println(String.format("turn %d: wall at %d, I'm at %d, move %d", turn, newWall, pos, best));
            System.out.println(best);
            System.out.flush();
        }
    }
}
