// Linkage starter bot (Go 1.19, standard library only).
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
// Try it:  koth match --game linkage bot.go   (watch: add --open)
package main

import (
	"fmt"
	"os"
	"strings"
)

var grid []string // grid[row][col], row 0 is row 1

// touching counts the cells next to the domino (r,c)-(r2,c2) that already hold colour.
func touching(colour byte, r, c, r2, c2 int) int {
	n := 0
	for _, cell := range [][2]int{{r, c}, {r2, c2}} {
		for _, d := range [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
			rr, cc := cell[0]+d[0], cell[1]+d[1]
			if rr < 0 || rr >= 7 || cc < 0 || cc >= 7 || (rr == r && cc == c) || (rr == r2 && cc == c2) {
				continue
			}
			if grid[rr][cc] == colour {
				n++
			}
		}
	}
	return n
}

func main() {
	if len(os.Args) > 1 {
		fmt.Println("StarterGo. koth starter kit (Go), v1")
		return
	}
	data, err := os.ReadFile("input.txt")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot read input.txt:", err)
		os.Exit(1)
	}
	lines := strings.Fields(string(data))
	head := lines[0] // "M6666": role, then dominoes left in R B G Y
	me := head[0]    // 'M' (More) or 'F' (Fewer)
	grid = lines[1:8]
	colours := "RBGY"

	// Strategy: More wants many groups, so it lays the domino touching the
	// fewest cells of its own colour; Fewer wants few groups, so it touches
	// the most. First found wins ties. This is the place to do better: look
	// ahead, count real groups, block the opponent with your 'x' zone...
	order := "Skip" // legal only when nothing fits
	found, bestScore := false, 0
	for k := 0; k < 4; k++ {
		if head[1+k] == '0' {
			continue // none of this colour left
		}
		for r := 0; r < 7; r++ {
			for c := 0; c < 7; c++ {
				for _, p := range [][2]int{{r, c + 1}, {r + 1, c}} { // right, down
					r2, c2 := p[0], p[1]
					// Only '.' is free: 'x' touches the opponent's last domino.
					if r2 > 6 || c2 > 6 || grid[r][c] != '.' || grid[r2][c2] != '.' {
						continue
					}
					t := touching(colours[k], r, c, r2, c2)
					score := t
					if me == 'M' {
						score = -t
					}
					if !found || score > bestScore {
						found, bestScore = true, score
						order = fmt.Sprintf("%c%c%d%c%d", colours[k], 'A'+c, r+1, 'A'+c2, r2+1)
					}
				}
			}
		}
	}

	fmt.Fprintf(os.Stderr, "%c %s: %s (score %d)\n", me, head[1:], order, bestScore)
	// order.txt is read once this process exits.
	if err := os.WriteFile("order.txt", []byte(order+"\n"), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "cannot write order.txt:", err)
		os.Exit(1)
	}
}
