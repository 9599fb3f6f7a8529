// Linkage starter bot (Java 17, standard library only).
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
// Try it:  koth match --game linkage bot.java   (watch: add --open)
// The file is bot.java, so the class must be `public class bot`.
import java.nio.file.Files;
import java.nio.file.Path;

public class bot {
    static String[] grid = new String[7]; // grid[row].charAt(col), row 0 is row 1

    // How many cells next to the domino (r,c)-(r2,c2) already hold `colour`.
    static int touching(char colour, int r, int c, int r2, int c2) {
        int[][] d = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
        int[][] cells = {{r, c}, {r2, c2}};
        int n = 0;
        for (int[] cell : cells)
            for (int[] dd : d) {
                int rr = cell[0] + dd[0], cc = cell[1] + dd[1];
                if (rr < 0 || rr >= 7 || cc < 0 || cc >= 7) continue;
                if ((rr == r && cc == c) || (rr == r2 && cc == c2)) continue;
                if (grid[rr].charAt(cc) == colour) n++;
            }
        return n;
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0) {
            System.out.println("StarterJava. koth starter kit (Java), v1");
            System.out.flush();
            return;
        }
        String[] lines = Files.readString(Path.of("input.txt")).trim().split("\\s+");
        String head = lines[0]; // "M6666": role, then dominoes left in R B G Y
        char me = head.charAt(0); // 'M' (More) or 'F' (Fewer)
        for (int r = 0; r < 7; r++) grid[r] = lines[1 + r];
        String colours = "RBGY";

        // Strategy: More wants many groups, so it lays the domino touching the
        // fewest cells of its own colour; Fewer wants few groups, so it touches
        // the most. First found wins ties. This is the place to do better: look
        // ahead, count real groups, block the opponent with your 'x' zone...
        String order = "Skip"; // legal only when nothing fits
        Integer bestScore = null;
        for (int k = 0; k < 4; k++) {
            if (head.charAt(1 + k) == '0') continue; // none of this colour left
            for (int r = 0; r < 7; r++)
                for (int c = 0; c < 7; c++)
                    for (int o = 0; o < 2; o++) { // o = 0: right, 1: down
                        int r2 = r + o, c2 = c + 1 - o;
                        // Only '.' is free: 'x' touches the opponent's last domino.
                        if (r2 > 6 || c2 > 6 || grid[r].charAt(c) != '.' || grid[r2].charAt(c2) != '.') continue;
                        int t = touching(colours.charAt(k), r, c, r2, c2);
                        int score = me == 'M' ? -t : t;
                        if (bestScore == null || score > bestScore) {
                            bestScore = score;
                            order = "" + colours.charAt(k) + (char) ('A' + c) + (r + 1) + (char) ('A' + c2) + (r2 + 1);
                        }
                    }
        }

        System.err.println(me + " " + head.substring(1) + ": " + order + " (score " + bestScore + ")");
        Files.writeString(Path.of("order.txt"), order + "\n"); // read once this process exits
    }
}
