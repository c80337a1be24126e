module github.com/lethe-research/lethe

go 1.24
