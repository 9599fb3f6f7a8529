// Slime starter bot (Go 1.19, standard library only).
// Four slimes start in the corners of an 8x8 board; each turn you spread,
// jump or merge one of your slimes, and whoever covers the most squares wins.
// Protocol: a NEW process is started every turn; the state is the one
// command-line argument "p,row0,row1,...,row7" (p = your player 1-4, rows
// of '.' for empty and '1'-'4' for slime). Answer one line "r0 c0 r1 c1"
// (move the slime at row r0, column c0 to r1 c1) on stdout; 0.1 s per turn.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Your folder is the working directory and is writable (keep files there).
// Try it:  koth match --game slime bot.go        (your bot in all 4 seats)
// Watch:   koth match --game slime bot.go --open (replay in the browser)
package main

import (
	"fmt"
	"os"
	"strings"
)

var board []string // board[r][c] is '.', '1', '2', '3' or '4'
var n int
var me byte // your player number, as a character

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// gain is how many squares we gain by moving (r, c) to (r2, c2); ok is false
// if the move is illegal. Distance is Chebyshev: diagonal neighbours are 1 away.
func gain(r, c, r2, c2 int) (g int, ok bool) {
	dist := abs(r2 - r)
	if abs(c2-c) > dist {
		dist = abs(c2 - c)
	}
	target := board[r2][c2]
	enemies, empty := 0, 0
	for a := r2 - 1; a <= r2+1; a++ {
		for b := c2 - 1; b <= c2+1; b++ {
			if a < 0 || b < 0 || a >= n || b >= n || (a == r2 && b == c2) {
				continue
			}
			if board[a][b] == '.' {
				empty++
			} else if board[a][b] != me {
				enemies++
			}
		}
	}
	// Spread (1 away) keeps the old slime; jump (2 away) moves it. Either
	// way every enemy slime around the target becomes ours.
	if target == '.' && dist == 1 {
		return enemies + 1, true
	}
	if target == '.' && dist == 2 {
		return enemies, true
	}
	// Merge: the moved slime disappears (its cell stays empty) and the
	// empty cells around the target become ours.
	if target == me && dist == 1 {
		return empty - 1, true
	}
	return 0, false
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, `usage: bot "p,row0,row1,..."`)
		os.Exit(1)
	}
	fields := strings.Split(os.Args[1], ",")
	me = fields[0][0]
	board = fields[1:]
	n = len(board)

	// Strategy: the legal move that gains the most squares (first found
	// wins ties). This is the place to do better: look ahead, defend...
	var best []int
	bestGain := -100
	for r := 0; r < n; r++ {
		for c := 0; c < n; c++ {
			if board[r][c] != me {
				continue
			}
			for r2 := r - 2; r2 <= r+2; r2++ {
				for c2 := c - 2; c2 <= c+2; c2++ {
					if r2 < 0 || c2 < 0 || r2 >= n || c2 >= n {
						continue
					}
					if g, ok := gain(r, c, r2, c2); ok && g > bestGain {
						best, bestGain = []int{r, c, r2, c2}, g
					}
				}
			}
		}
	}

	// fmt.Println writes straight to os.Stdout (unbuffered): nothing to flush.
	if best == nil {
		// No slime left, or none can move: all that is left is to pass,
		// which koth records as an invalid move (the game goes on).
		fmt.Fprintln(os.Stderr, "no legal move: passing")
		fmt.Println("pass")
	} else {
		// Debug output goes BEFORE the answer: the process is stopped as
		// soon as its answer line is read.
		fmt.Fprintf(os.Stderr, "player %c: move %v gains %d\n", me, best, bestGain)
		fmt.Printf("%d %d %d %d\n", best[0], best[1], best[2], best[3])
	}
}
