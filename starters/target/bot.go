// Invisible target starter bot (Go 1.19).
// 2-16 bots wander a 32x32 torus while walls appear; at the end (when no
// more wall can be placed) the bot nearest the hidden target cell wins.
// Protocol (stdin/stdout, one long-lived process), every turn one line
// "POS WALL ENEMY...": cells numbered row*32 + col; WALL is the wall added
// since your last turn, or 1024 for none; enemies always in the same order.
// Answer one digit and flush: 0 up, 1 left, 2 stay, 3 right, 4 down
// (the board wraps around). Moving into a wall, or into a cell another bot
// also wants, leaves you where you are. 50 ms per move, or you stay.
// Nothing is sent at the end: stdin closes and the bot is stopped.
// Stderr is for debugging: koth shows it beside your moves in the replay.
// Try it:  koth match --game target bot.go   (watch: add --open)
package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"
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

// farthest is the walking distance (a BFS around walls) to the farthest reachable cell.
func farthest(start int) int {
	var dist, todo [CELLS]int // fixed-size arrays: no garbage to collect
	for i := range dist {
		dist[i] = -1
	}
	dist[start], todo[0] = 0, start
	head, tail := 0, 1
	for head < tail {
		p := todo[head]
		head++
		for _, d := range dirs {
			if q := step(p, d); dist[q] < 0 && !wall[q] {
				dist[q] = dist[p] + 1
				todo[tail] = q
				tail++
			}
		}
	}
	return dist[todo[tail-1]] // a BFS meets the farthest cell last
}

// Strategy (the one the challenge's author found beats moving at random):
// the target is somewhere in the area we can reach (walls never cut a bot off
// from it), so stand at the centre of that area, the cell from which the
// farthest reachable cell is nearest, and follow the centre as walls close in.
// This is the place to do better: weigh cells by how likely they are to be
// the target (a dead end that no wall fills for long...), block other bots...
func main() {
	rand.Seed(time.Now().UnixNano()) // Go 1.19 does not seed it by itself
	in := bufio.NewScanner(os.Stdin) // splits on "\n", dropping a trailing "\r"
	out := bufio.NewWriter(os.Stdout)
	turn, lastPos, lastMove := 0, -1, 2
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
		best, bestFar := 2, farthest(pos) // staying is the default
		for _, d := range dirs {
			q := step(pos, d)
			blocked := wall[q]
			for _, e := range enemies {
				blocked = blocked || e == q
			}
			if blocked {
				continue // that move would fail
			}
			if far := farthest(q); far < bestFar {
				best, bestFar = d, far
			}
		}
		// A move that did not happen means another bot wanted the same cell; if
		// both insist, neither ever moves again. So after one, wait half the time.
		if lastMove != 2 && pos == lastPos && rand.Intn(2) == 0 {
			best = 2
		}
		lastPos, lastMove = pos, best
		if newWall != NoWall {
			fmt.Fprintf(os.Stderr, "turn %d: wall at %d, I'm at %d, move %d, farthest cell %d steps away\n",
				turn, newWall, pos, best, bestFar)
		}
		fmt.Fprintln(out, best)
		out.Flush() // without it the answer would sit in the buffer
	}
}
