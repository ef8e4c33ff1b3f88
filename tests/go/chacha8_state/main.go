// Command chacha8_state is Go's side of ratchet-rng's ChaCha8 save/restore
// interoperability check (issue 13). It uses only the standard library's
// math/rand/v2 ChaCha8 (MarshalBinary / UnmarshalBinary / Read / Uint64).
//
//	chacha8_state vectors          the vector lines of tests/data/go_chacha8_states.txt
//	chacha8_state save SEED OPS    Go's MarshalBinary after OPS, and the next 64 bytes
//	chacha8_state continue N       reads a hex state on stdin, unmarshals it into a new
//	                               ChaCha8, prints "ok MARSHAL NEXT" (NEXT: N bytes of
//	                               Read) or "error" / "panic" if Go refuses it
//
// SEED is 64 hex digits; OPS is a comma-separated list of "u" (Uint64) and "rN"
// (Read of N bytes), "-" for none; "u*K" / "rN*K" repeat an operation K times.
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
)

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chacha8_state: "+format+"\n", args...)
	os.Exit(2)
}

func seedOf(s string) [32]byte {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		die("a seed is 64 hex digits, not %q", s)
	}
	var seed [32]byte
	copy(seed[:], b)
	return seed
}

// run applies OPS to c.
func run(c *rand.ChaCha8, ops string) {
	if ops == "-" {
		return
	}
	for _, op := range strings.Split(ops, ",") {
		times := 1
		if name, k, ok := strings.Cut(op, "*"); ok {
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 {
				die("bad repeat count in %q", op)
			}
			op, times = name, n
		}
		for i := 0; i < times; i++ {
			switch {
			case op == "u":
				c.Uint64()
			case strings.HasPrefix(op, "r"):
				n, err := strconv.Atoi(op[1:])
				if err != nil || n < 0 {
					die("bad read length in %q", op)
				}
				buf := make([]byte, n)
				c.Read(buf)
			default:
				die("unknown operation %q", op)
			}
		}
	}
}

func marshal(c *rand.ChaCha8) string {
	b, err := c.MarshalBinary()
	if err != nil {
		die("MarshalBinary: %v", err)
	}
	return hex.EncodeToString(b)
}

func next(c *rand.ChaCha8, n int) string {
	buf := make([]byte, n)
	c.Read(buf)
	return hex.EncodeToString(buf)
}

// restore unmarshals data into a new ChaCha8: "ok", "error" or "panic".
func restore(data []byte) (c *rand.ChaCha8, verdict string) {
	c = rand.NewChaCha8([32]byte{})
	defer func() {
		if recover() != nil {
			c, verdict = nil, "panic"
		}
	}()
	if err := c.UnmarshalBinary(data); err != nil {
		return nil, "error"
	}
	return c, "ok"
}

var seeds = []string{
	"0000000000000000000000000000000000000000000000000000000000000000",
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	"dededededededededededededededededededededededededededededededede",
}

var scripts = []string{
	"-", "u", "r1", "r3", "r7", "r8", "r9", "r3,u", "r3,r2", "u,r5,u", "r5,u,r3",
	"u*31", "u*32", "u*33", "r251", "u*123", "u*124", "u*125", "r991", "r992",
	"r993", "r995,r2", "u*124,r3", "r1000", "r1984", "r2000,r13", "u*300,r6",
	"r4096,u,r1",
}

// A crafted input Go refuses, and the ratchet_rng::RestoreError variant that
// ChaChaKeyErasureRng::restore must return for it (Go has one error for all but
// the readbuf part, so the finer reason is named here, beside the input).
type rejected struct {
	in   []byte
	want string
}

// Inputs that Go's UnmarshalBinary accepts although MarshalBinary never writes
// them, and inputs it refuses; made from the key of seed 1 (used-word counts
// and readbuf parts varied around the state after "u*5").
func crafted() (accept [][]byte, reject []rejected) {
	c := rand.NewChaCha8(seedOf(seeds[1]))
	run(c, "u*5")
	plain, _ := c.MarshalBinary() // chacha8: used=5, no readbuf
	key := plain[16:]
	state := func(used uint64) []byte {
		b := []byte("chacha8:")
		for i := 7; i >= 0; i-- {
			b = append(b, byte(used>>(8*i)))
		}
		return append(b, key...)
	}
	rb := func(n int, rest []byte) []byte {
		b := append([]byte("readbuf:"), byte(n))
		for i := 0; i < n; i++ {
			b = append(b, byte(0xa0+i))
		}
		return append(b, rest...)
	}
	accept = [][]byte{
		state(0), state(1), state(31), state(32), state(123), state(124),
		rb(0, state(5)), rb(1, state(5)), rb(8, state(5)), rb(3, state(0)),
		rb(8, state(0)), rb(8, state(124)), rb(5, state(1)),
	}
	bad := state(5)
	reject = []rejected{
		{[]byte{}, "WrongLength"},
		{[]byte("chacha8"), "WrongLength"},
		{state(125), "BadPosition"},
		{state(1 << 32), "BadPosition"},
		{state(^uint64(0)), "BadPosition"},
		{bad[:47], "WrongLength"},
		{append(append([]byte{}, bad...), 0), "WrongLength"},
		{[]byte("chacha9:" + string(bad[8:])), "BadMagic"},
		{[]byte("readbuf:"), "BadReadBuffer"},
		{rb(3, nil)[:10], "BadReadBuffer"},
		{rb(9, state(5)), "BadReadBuffer"},
		{rb(255, state(5)), "BadReadBuffer"},
		{rb(3, state(125)), "BadPosition"},
		{rb(3, bad[:40]), "WrongLength"},
		{rb(0, rb(0, state(5))), "BadMagic"},
		{append([]byte("READBUF:\x00"), bad...), "BadMagic"},
		{[]byte("readbuf"), "BadMagic"},
		// A whole readbuf part and no state at all: the state's length is wrong,
		// the readbuf is not.
		{rb(3, nil), "WrongLength"},
	}
	return accept, reject
}

func main() {
	if len(os.Args) < 2 {
		die("usage: chacha8_state vectors | save SEED OPS | continue N")
	}
	switch os.Args[1] {
	case "vectors":
		for _, seed := range seeds {
			for _, ops := range scripts {
				c := rand.NewChaCha8(seedOf(seed))
				run(c, ops)
				fmt.Printf("state %s %s %s %s\n", seed, ops, marshal(c), next(c, 64))
			}
		}
		accept, reject := crafted()
		for _, in := range accept {
			c, verdict := restore(in)
			if verdict != "ok" {
				die("crafted input %x: %s", in, verdict)
			}
			fmt.Printf("accept %x %s %s\n", in, marshal(c), next(c, 64))
		}
		for _, r := range reject {
			_, verdict := restore(r.in)
			if verdict == "ok" {
				die("crafted input %x accepted", r.in)
			}
			fmt.Printf("reject %x %s %s\n", r.in, verdict, r.want)
		}
	case "save":
		if len(os.Args) != 4 {
			die("usage: chacha8_state save SEED OPS")
		}
		c := rand.NewChaCha8(seedOf(os.Args[2]))
		run(c, os.Args[3])
		fmt.Printf("%s %s\n", marshal(c), next(c, 64))
	case "continue":
		if len(os.Args) != 3 {
			die("usage: chacha8_state continue N < STATE_HEX")
		}
		n, err := strconv.Atoi(os.Args[2])
		if err != nil || n < 0 {
			die("bad length %q", os.Args[2])
		}
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil && line == "" {
			die("no state on stdin")
		}
		data, err := hex.DecodeString(strings.TrimSpace(line))
		if err != nil {
			die("the state is not hex: %v", err)
		}
		c, verdict := restore(data)
		if verdict != "ok" {
			fmt.Println(verdict)
			return
		}
		fmt.Printf("ok %s %s\n", marshal(c), next(c, n))
	default:
		die("unknown mode %q", os.Args[1])
	}
}
