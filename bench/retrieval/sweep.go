package main

import (
	"context"
	"fmt"
	"os"

	"github.com/lethe-research/lethe/eval/questions"
)

// runSweep measures the session engine over a grid of its options, on the
// odd and the even halves of the questions (by position in id order), so
// that a setting chosen on one half can be checked on the other: a
// difference of one or two questions between settings is within what the
// choice of half moves.
func runSweep(ctx context.Context, e *engines, qs []questions.Question, base params, save func() error) error {
	fmt.Printf("| candidates | rrf k | hits in order | min trim | max chars | odd: all gold | odd: chars | even: all gold | even: chars | all | chars |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range []int{20, 40, 80} {
		for _, k := range []float64{10, 30, 60} {
			for _, hio := range []bool{false, true} {
				for _, mt := range []int{0, 200} {
					for _, mc := range []int{4800, 5100} {
						p := base
						p.candidates, p.rrfK, p.hitsInOrder, p.minTrim, p.maxChars = c, k, hio, mt, mc
						var full, chars [2]int
						for i, q := range qs {
							texts, err := e.engine(ctx, q.Question, p)
							if err != nil {
								return fmt.Errorf("%s: %w", q.ID, err)
							}
							if questions.Evidence(q, texts) >= 1 {
								full[i%2]++
							}
							chars[i%2] += charsOf(texts)
						}
						n0, n1 := (len(qs)+1)/2, len(qs)/2
						fmt.Printf("| %d | %g | %v | %d | %d | %d/%d | %d | %d/%d | %d | %d/%d | %d |\n", c, k, hio, mt, mc,
							full[0], n0, chars[0]/max(n0, 1), full[1], n1, chars[1]/max(n1, 1), full[0]+full[1], len(qs), (chars[0]+chars[1])/max(len(qs), 1))
					}
				}
			}
		}
		if err := save(); err != nil {
			fmt.Fprintln(os.Stderr, "retrieval: save vector cache:", err)
		}
	}
	return nil
}
