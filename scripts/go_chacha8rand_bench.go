// Throughput of Go's math/rand/v2 ChaCha8 (the C2SP chacha8rand generator that
// ChaChaKeyErasureRng reproduces), for the comparison table in docs/PERFORMANCE.md:
// `go run scripts/go_chacha8rand_bench.go`. Same measurements as the criterion
// groups `fill_bytes/524288` and `next_u64` of benches/generators.rs.
package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func main() {
	var seed [32]byte
	for i := range seed {
		seed[i] = 7
	}
	buf := make([]byte, 512*1024)
	fill := testing.Benchmark(func(b *testing.B) {
		rng := rand.NewChaCha8(seed)
		b.SetBytes(int64(len(buf)))
		for i := 0; i < b.N; i++ {
			rng.Read(buf)
		}
	})
	var sink uint64
	u64 := testing.Benchmark(func(b *testing.B) {
		rng := rand.NewChaCha8(seed)
		for i := 0; i < b.N; i++ {
			sink += rng.Uint64()
		}
	})
	perFill := float64(fill.T.Nanoseconds()) / float64(fill.N)
	gib := float64(len(buf)) / perFill * 1e9 / (1 << 30)
	fmt.Printf("go chacha8rand Read 512 KiB: %.2f GiB/s (%.1f us per fill)\n", gib, perFill/1e3)
	fmt.Printf("go chacha8rand Uint64: %.2f ns (sink %d)\n", float64(u64.T.Nanoseconds())/float64(u64.N), sink&1)
}
