# `make bench-mpi`: data-parallel throughput with 1 and 2 ranks, blocking vs overlapped
# all-reduce, exposed communication time per step; recorded in bench/RESULTS.md.
.PHONY: bench-mpi
bench-mpi: all
	@BUILD=$(BUILD) bash bench/mpi_bench.sh
