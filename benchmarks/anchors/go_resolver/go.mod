module urnkit/benchmarks/go_resolver

go 1.19
