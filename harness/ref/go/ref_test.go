// Go reference points for the targets in issues 3 and 4, measured with Go's own
// benchmark framework:  GO111MODULE=off go test -bench . -benchtime=2s  (see rules.mk).
//
//   BenchmarkGosched:        one round trip = two goroutines each calling
//                            runtime.Gosched once (compare: workloads/yield, 2 bthreads)
//   BenchmarkChanPingPong:   one round trip over two unbuffered channels between two
//                            goroutines (compare: workloads/pingpong)
//   BenchmarkBlocked1M:      10^6 goroutines blocked on one channel, then released and
//                            joined; reports peak RSS (compare: workloads/blocked)
package ref

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func BenchmarkGosched(b *testing.B) {
	var wg sync.WaitGroup
	wg.Add(2)
	b.ResetTimer()
	for g := 0; g < 2; g++ {
		go func() {
			for i := 0; i < b.N; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

func BenchmarkChanPingPong(b *testing.B) {
	ping, pong := make(chan int), make(chan int)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
	}()
	b.ResetTimer()
	v := 0
	for i := 0; i < b.N; i++ {
		ping <- v
		v = <-pong
	}
	close(ping)
	if v != b.N {
		b.Fatalf("token %d, want %d", v, b.N)
	}
}

func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func BenchmarkBlocked1M(b *testing.B) {
	const n = 1000000
	for i := 0; i < b.N; i++ {
		gate := make(chan struct{})
		var started, done sync.WaitGroup
		started.Add(n)
		done.Add(n)
		for g := 0; g < n; g++ {
			go func() {
				started.Done()
				<-gate
				done.Done()
			}()
		}
		started.Wait()
		close(gate)
		done.Wait()
	}
	b.ReportMetric(peakRSSMiB(), "peak_rss_mb")
}
