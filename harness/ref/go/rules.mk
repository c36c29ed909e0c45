# harness/ref/go -- Go reference points (golang-go from Debian; not part of `make all`).
#   make bench-go     runs Go's benchmarks with GOMAXPROCS=1 and 2
.PHONY: bench-go
bench-go:
	@command -v go >/dev/null || { echo "bench-go: install golang-go (apt-get install golang-go)"; exit 2; }
	cd harness/ref/go && for p in 1 2; do GO111MODULE=off GOCACHE=$${TMPDIR:-/tmp}/schedbench-gocache GOMAXPROCS=$$p go test -run xxx -bench . -benchtime=$${GO_BENCHTIME:-1s} -count=$${GO_COUNT:-3} -cpu $$p; done
