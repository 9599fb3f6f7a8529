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
	dr := [5]int{N - 1, 0, 0, 0, 1}[d] // adding N-1 is one step back, wrapped
	dc := [5]int{0, N - 1, 0, 1, 0}[d]
	return (p/N+dr)%N*N + (p%N+dc)%N
}

// farthest is the walking distance (a BFS around walls) from start to the
// farthest likely target: a dead end (a cell with at most one open side) that
// no other bot stands on; while there are none, the farthest reachable cell.
func farthest(start int, enemy *[CELLS]bool) int {
	var dist, todo [CELLS]int // fixed-size arrays: no garbage to collect
	for i := range dist {
		dist[i] = -1
	}
	dist[start], todo[0] = 0, start
	head, tail, farDeadEnd := 0, 1, -1
	for head < tail {
		p := todo[head]
		head++
		openSides := 0
		for _, d := range dirs {
			q := step(p, d)
			if wall[q] {
				continue
			}
			openSides++
			if dist[q] < 0 {
				dist[q] = dist[p] + 1
				todo[tail] = q
				tail++
			}
		}
		if openSides <= 1 && !enemy[p] {
			farDeadEnd = dist[p]
		}
	}
	// A BFS meets the farthest cells last.
	if farDeadEnd >= 0 {
		return farDeadEnd
	}
	return dist[todo[tail-1]]
}

// Strategy: the target is somewhere in the area we can reach (walls never cut
// a bot off from it). A wall can always fill a dead end unless a bot or the
// target is on it, so the dead ends that stay open are where the target hides:
// at the very end it is the only one no bot stands on. So stand where the
// farthest such dead end is nearest (early on, when there are none: at the
// centre of the area), and follow that spot as walls close in.
// This is the place to do better: weigh dead ends by how long they have stayed
// open, keep out of other bots' way or block them...
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
		pos, newWall := f[0], f[1]
		var enemy [CELLS]bool // the other bots, this turn
		for _, e := range f[2:] {
			enemy[e] = true
		}
		turn++
		if newWall != NoWall {
			wall[newWall] = true
		}
		best, bestFar := 2, farthest(pos, &enemy) // staying is the default
		for _, d := range dirs {
			q := step(pos, d)
			if wall[q] || enemy[q] {
				continue // that move would fail
			}
			if far := farthest(q, &enemy); far < bestFar {
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
			fmt.Fprintf(os.Stderr, "turn %d: wall at %d, I'm at %d, move %d, farthest likely target %d steps away\n",
				turn, newWall, pos, best, bestFar)
		}
		fmt.Fprintln(out, best)
		out.Flush() // without it the answer would sit in the buffer
	}
}
