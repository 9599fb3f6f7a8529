// Snake starter bot (Go 1.19).
// Tron light cycles for 2 players on a 32x32 board: both snakes move one cell
// per turn at the same time and leave a permanent trail; whoever crashes
// (edge, any trail, or the other head) last wins.
// Protocol (stdin/stdout, one long-lived process):
//   first print an id line (your bot's name);
//   then each turn you get "ME THEM": the cells of both heads, cell = row*32 + col
//   (you always see the board as the snake that started at 484);
//   answer one line "u", "d", "l" or "r" and flush. Anything else crashes you.
//   At the end you get "WIN", "LOSS" or "TIE" instead; then exit.
// Only the heads are sent: remember the trails yourself. 200 ms per move.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game snake bot.go   (watch: add --open)
package main

import (
	"bufio"
	"fmt"
	"os"
)

const N = 32

var taken [N * N]bool // every cell either snake has ever occupied
var dirs = []byte{'u', 'd', 'l', 'r'}

// step returns the cell reached from p going d, or -1 past the edge.
func step(p int, d byte) int {
	r, c := p/N, p%N
	switch d {
	case 'u':
		r--
	case 'd':
		r++
	case 'l':
		c--
	default:
		c++
	}
	if r < 0 || c < 0 || r >= N || c >= N {
		return -1
	}
	return r*N + c
}

func isFree(p int) bool { return p >= 0 && !taken[p] }

// room counts the free cells that can be reached from start (a flood fill).
func room(start int) int {
	var seen [N * N]bool
	todo := []int{start}
	seen[start] = true
	count := 1
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, d := range dirs {
			if q := step(p, d); isFree(q) && !seen[q] {
				seen[q] = true
				todo = append(todo, q)
				count++
			}
		}
	}
	return count
}

// choose is where your strategy goes. This one: go where the most room is;
// on a tie, prefer a cell the opponent cannot also step into (head-on = tie).
func choose(me, them int) byte {
	best, bestScore := byte('u'), -1 // if every way is blocked we crash anyway
	for _, d := range dirs {
		q := step(me, d)
		if !isFree(q) {
			continue
		}
		contested := false
		for _, e := range dirs {
			if step(them, e) == q {
				contested = true
			}
		}
		score := room(q) * 2
		if !contested {
			score++
		}
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	return best
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "starter_go") // the id line
	out.Flush()
	for in.Scan() {
		var me, them int
		if n, _ := fmt.Sscan(in.Text(), &me, &them); n != 2 { // WIN, LOSS or TIE
			fmt.Fprintln(os.Stderr, "result:", in.Text())
			break
		}
		taken[me], taken[them] = true, true
		move := choose(me, them)
		fmt.Fprintf(os.Stderr, "at %d, opponent at %d: %c\n", me, them, move)
		fmt.Fprintf(out, "%c\n", move)
		out.Flush() // without this the answer sits in a buffer
	}
}
