// Flit starter bot (Go 1.19).
// Four bots on a 32x32 torus (edges wrap; neighbours are up/down/left/right)
// take turns moving one of their pieces to any empty square next to ANOTHER
// of their pieces; landing next to a neutral piece converts it. Most pieces wins.
// Protocol (stdin/stdout, one long-lived process):
//   first line: your colour, "1" to "4";
//   then updates "x y c" (x = column, y = row, c = 0 empty, 1-4 a bot,
//   5 neutral) and, on your turn, "M": answer "x0 y0 x1 y1" and flush.
//   The board is never resent: keep it up to date from the updates yourself.
//   "x y x y" (same square twice) passes; an illegal move is a pass counted
//   as invalid output. Four passes in a row end the game.
//   50 ms per move; 5 timeouts in a row freeze you. There is no end message:
//   koth stops your process when the game ends (exit if stdin closes).
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game flit bot.go   (watch: add --open)

package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

const N, FAR = 32, 99 // FAR: "distance" when there is no neutral piece

var board [N * N]int // board[y*N + x]: 0 empty, 1-4 bots, 5 neutral
var nb [N * N][4]int // the 4 neighbours of each square
var me int

// count says how many of the neighbours of square i hold colour c.
func count(i, c int) int {
	n := 0
	for _, j := range nb[i] {
		if board[j] == c {
			n++
		}
	}
	return n
}

// distances gives the steps from every square to the nearest neutral piece (a BFS).
func distances() []int {
	dist := make([]int, N*N)
	todo := []int{}
	for i := range dist {
		dist[i] = FAR
		if board[i] == 5 {
			dist[i] = 0
			todo = append(todo, i)
		}
	}
	for h := 0; h < len(todo); h++ {
		for _, j := range nb[todo[h]] {
			if dist[j] == FAR {
				dist[j] = dist[todo[h]] + 1
				todo = append(todo, j)
			}
		}
	}
	return dist
}

// choose is where your strategy goes. This one: land where the most neutral
// pieces are taken, else as close as possible to one (else where our pieces
// are densest), and move our piece that is farthest from any neutral.
// It returns origin, target and neutral pieces taken; origin == target passes.
func choose() (int, int, int) {
	dist := distances()
	best, bestScore, pieces := -1, -1, 0
	for i := 0; i < N*N; i++ { // a legal target: empty, next to our piece
		if board[i] == me {
			pieces++
		}
		if board[i] != 0 || count(i, me) == 0 {
			continue
		}
		score := count(i, 5)*10000 + (100-dist[i])*10 + count(i, me)
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || pieces < 2 {
		return 0, 0, 0
	}
	// The target must stay next to another of our pieces once the mover left.
	only := -1
	if count(best, me) == 1 {
		for _, j := range nb[best] {
			if board[j] == me {
				only = j
			}
		}
	}
	pick, pickScore := -1, -1
	for i := 0; i < N*N; i++ {
		if board[i] != me || i == only {
			continue
		}
		if score := dist[i]*10 + 4 - count(i, me); score > pickScore {
			pick, pickScore = i, score
		}
	}
	return pick, best, bestScore / 10000
}

func main() {
	for i := range nb {
		x, y := i%N, i/N
		nb[i] = [4]int{y*N + (x+1)%N, y*N + (x+N-1)%N, (y+1)%N*N + x, (y+N-1)%N*N + x}
	}
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		var x, y, c int
		n, _ := fmt.Sscan(line, &x, &y, &c) // how many numbers the line has
		if line == "M" {
			o, t, takes := choose()
			move := fmt.Sprintf("%d %d %d %d", o%N, o/N, t%N, t/N)
			if takes > 0 {
				fmt.Fprintf(os.Stderr, "%s: takes %d neutral\n", move, takes)
			}
			fmt.Fprintln(out, move)
			out.Flush() // without this the answer sits in a buffer
		} else if n == 3 { // an update "x y c"
			board[y*N+x] = c
		} else if n == 1 { // the very first line: our colour
			me = x
		}
	}
}
