// Invisible target starter bot (Go 1.19).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line:
//   "POS WALL ENEMY..."  cells numbered row*32 + col; WALL is the wall added
//   since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
// (the board wraps around). Moving into a wall or into a cell another bot
// also wants just leaves you where you are. 50 ms per move, or you stay.
// Nothing is sent at the end: stdin closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.go   (watch: add --open)
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const (
	N      = 32
	CELLS  = N * N
	NoWall = 1024
)

var dirs = []int{0, 1, 3, 4} // up, left, right, down (2 = stay)
var wall [CELLS]bool         // walls never go away: remember them all

// step is the cell reached from p going d, wrapping around the edges.
func step(p, d int) int {
	r, c := p/N, p%N
	switch d {
	case 0:
		r = (r + N - 1) % N
	case 1:
		c = (c + N - 1) % N
	case 3:
		c = (c + 1) % N
	case 4:
		r = (r + 1) % N
	}
	return r*N + c
}

// total is the sum of walking distances (a BFS) from start to every cell it can reach.
func total(start int) int {
	var dist, todo [CELLS]int // fixed-size arrays: no garbage to collect
	for i := range dist {
		dist[i] = -1
	}
	dist[start], todo[0] = 0, start
	head, tail, sum := 0, 1, 0
	for head < tail {
		p := todo[head]
		head++
		sum += dist[p]
		for _, d := range dirs {
			if q := step(p, d); dist[q] < 0 && !wall[q] {
				dist[q] = dist[p] + 1
				todo[tail] = q
				tail++
			}
		}
	}
	return sum
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it), so stand where the AVERAGE walking distance to that area
// is smallest, and follow that spot as walls close the area in.
// This is the place to do better: weigh cells by how likely they are to be
// the target, keep out of other bots' way, block them...
func main() {
	in := bufio.NewScanner(os.Stdin) // splits on "\n", dropping a trailing "\r"
	out := bufio.NewWriter(os.Stdout)
	turn := 0
	for in.Scan() {
		var f []int
		for _, w := range strings.Fields(in.Text()) {
			v, _ := strconv.Atoi(w)
			f = append(f, v)
		}
		pos, newWall, enemies := f[0], f[1], f[2:]
		turn++
		if newWall != NoWall {
			wall[newWall] = true
		}
		best, bestTotal := 2, total(pos) // staying is the default
		for _, d := range dirs {
			q := step(pos, d)
			blocked := wall[q]
			for _, e := range enemies {
				blocked = blocked || e == q
			}
			if blocked {
				continue // that move would fail
			}
			if t := total(q); t < bestTotal {
				best, bestTotal = d, t
			}
		}
		if newWall != NoWall {
			fmt.Fprintf(os.Stderr, "turn %d: wall at %d, I'm at %d, move %d (sum of distances %d)\n",
				turn, newWall, pos, best, bestTotal)
		}
		fmt.Fprintln(out, best)
		out.Flush() // without it the answer would sit in the buffer
	}
}
