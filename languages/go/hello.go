// Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "hello from go")
	in := bufio.NewScanner(os.Stdin) // splits on "\n", dropping a trailing "\r"
	in.Buffer(make([]byte, 64*1024), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		if in.Text() == "M" {
			fmt.Fprintln(out, "0 0 0 0")
			out.Flush()
		}
	}
}
