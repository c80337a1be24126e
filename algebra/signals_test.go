package algebra

import (
	"math"
	"testing"
)

func in01(t *testing.T, name string, v float64) {
	t.Helper()
	if !(v >= 0 && v <= 1) {
		t.Errorf("%s = %v, want in [0, 1]", name, v)
	}
}

func checkObservation(t *testing.T, o SignalObservation) {
	t.Helper()
	for name, v := range map[string]float64{
		"GA": o.GA, "GATask": o.GATask, "GAEvidence": o.GAEvidence, "Coverage": o.Coverage,
		"Stability": o.Stability, "StabilityConf": o.StabilityConf, "Residual": o.Residual,
		"ResidualConf": o.ResidualConf, "Eigengap": o.Eigengap, "SVDConf": o.SVDConf,
		"SubspaceDistance": o.SubspaceDistance, "Novelty": o.Novelty,
	} {
		in01(t, name, v)
	}
	if o.State != nil && !near(Norm(o.State), 1, 1e-12) {
		t.Errorf("|State| = %v", Norm(o.State))
	}
	if o.Gap != nil && Norm(o.Gap) > 0 && !near(Norm(o.Gap), 1, 1e-12) {
		t.Errorf("|Gap| = %v", Norm(o.Gap))
	}
}

func TestComputeIterationSignalsNoEvidence(t *testing.T) {
	goal := refNormals(1, 16)
	task := refNormals(2, 16)
	o := ComputeIterationSignals(SignalInputs{Goal: goal, Task: task})
	checkObservation(t, o)
	if o.NEvidence != 0 || o.GA != 0 || o.Residual != 1 || o.ResidualConf != 0 || o.SVDConf != 0 ||
		o.StabilityConf != 0 || o.Coverage != 0 || o.Eigengap != 0 || o.SubspaceDistance != 1 || o.SVD.K != 0 {
		t.Errorf("zero evidence: %+v", o)
	}
	if o.GATask != NormalizeCosine(Cosine(task, goal)) {
		t.Errorf("GATask = %v", o.GATask)
	}
	if !near(Cosine(o.Gap, goal), 1, 1e-12) {
		t.Error("Gap should be the goal with an empty SVD")
	}
	// trackers hold on this observation
	tr := InitialTrackers()
	if got := tr.Update(o.Scalars(), DefaultEMAAlpha); got != tr {
		t.Errorf("trackers moved on zero-confidence observation: %+v", got)
	}
}

func TestComputeIterationSignalsSequence(t *testing.T) {
	d := 64
	rows := refMatrix(400, d, 3, "decay")
	goal := refNormals(4, d)
	// make the goal partly aligned with the evidence
	for j := range goal {
		goal[j] += 2 * rows[0][j]
	}
	task := rows[5]
	var prev SignalObservation
	prev.SVD = EmptySVD(d)
	tr := InitialTrackers()
	sizes := []int{0, 2, 10, 60, 200, 250, 250, 400}
	for it, n := range sizes {
		newEv := 0
		if it > 0 {
			newEv = n - sizes[it-1]
		}
		o := ComputeIterationSignals(SignalInputs{
			Evidence: rows[:n], Goal: goal, Task: task, Active: [][]float64{rows[7]},
			PrevState: prev.State, PrevSVD: prev.SVD, NewEvidence: newEv, K: 8, MinEvidence: 3, Seed: 9,
		})
		checkObservation(t, o)
		if o.NEvidence != n {
			t.Errorf("it %d: NEvidence = %d", it, o.NEvidence)
		}
		if n >= 3 && o.SVD.K == 0 {
			t.Errorf("it %d: empty SVD with %d rows", it, n)
		}
		if n < 3 && (o.SVD.K != 0 || o.SVDConf != 0) {
			t.Errorf("it %d: SVD with %d rows", it, n)
		}
		if it == 0 && o.StabilityConf != 0 {
			t.Errorf("first iteration must not trust stability")
		}
		if it > 0 && newEv == 0 && n > 0 {
			// nothing new: novelty only from subspace motion, which is small
			if o.Novelty > 0.1 {
				t.Errorf("it %d: novelty %v without new evidence", it, o.Novelty)
			}
			if o.Stability < 0.99 {
				t.Errorf("it %d: stability %v without new evidence", it, o.Stability)
			}
		}
		if n > 0 && prev.SVD.K == 0 && o.SubspaceDistance != 1 {
			t.Errorf("it %d: distance from empty = %v", it, o.SubspaceDistance)
		}
		if n > 0 && o.GA != Confidence(float64(n))*o.GAEvidence {
			t.Errorf("it %d: GA = %v", it, o.GA)
		}
		tr = tr.Update(o.Scalars(), DefaultEMAAlpha)
		prev = o
	}
	if !(tr.Stability.Value > 0.5) || !(tr.Residual.Value < 1) {
		t.Errorf("trackers did not move: %+v", tr)
	}
	// deterministic
	a := ComputeIterationSignals(SignalInputs{Evidence: rows, Goal: goal, Task: task, PrevSVD: prev.SVD, NewEvidence: 10, K: 8, Seed: 1})
	b := ComputeIterationSignals(SignalInputs{Evidence: rows, Goal: goal, Task: task, PrevSVD: prev.SVD, NewEvidence: 10, K: 8, Seed: 1})
	if a.Novelty != b.Novelty || a.GA != b.GA || !sameFloats(a.SVD.Basis, b.SVD.Basis) || !sameFloats(a.Gap, b.Gap) {
		t.Error("ComputeIterationSignals is not deterministic")
	}
}

func TestMeanIGNormedMatchesMeanInformationGain(t *testing.T) {
	rows := refMatrix(120, 24, 6, "decay")
	rows = append(rows, rows[3], make([]float64, 24)) // a duplicate and a zero row
	norms := make([]float64, len(rows))
	for i, r := range rows {
		norms[i] = Norm(r)
	}
	old := 100
	got := meanIGNormed(rows, norms, old, 24)
	want := MeanInformationGain(rows[old:], rows[:old])
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("meanIGNormed = %v, MeanInformationGain = %v", got, want)
	}
}

func BenchmarkComputeIterationSignals(b *testing.B) {
	rows, ref := bigMatrix(b, "decay")
	goal := refNormals(99, ref.D)
	prev := ComputeIterationSignals(SignalInputs{Evidence: rows[:len(rows)-50], Goal: goal, Task: rows[3], NewEvidence: 50, Seed: 1})
	in := SignalInputs{Evidence: rows, Goal: goal, Task: rows[3], Active: rows[10:13], PrevState: prev.State, PrevSVD: prev.SVD, NewEvidence: 50, Seed: 1}
	b.ReportAllocs()
	for b.Loop() {
		ComputeIterationSignals(in)
	}
}

// TestNewRowsMask: the NewRows mask marks the new rows wherever they sit.
// A mask over the last k rows is NewEvidence = k exactly; a mask over
// scattered rows is the same computation as with those rows moved last
// (for the novelty's information gain); no mask flag is NewEvidence = 0.
func TestNewRowsMask(t *testing.T) {
	const n, d = 12, 16
	rows := make([][]float64, n)
	for i := range rows {
		rows[i] = refNormals(uint64(100+i), d)
	}
	goal := refNormals(7, d)
	prev := ComputeIterationSignals(SignalInputs{Evidence: rows[:8], Goal: goal, K: 4, MinEvidence: 3, Seed: 1})
	base := SignalInputs{Evidence: rows, Goal: goal, PrevState: prev.State, PrevSVD: prev.SVD, K: 4, MinEvidence: 3, Seed: 1}
	mask := func(idx ...int) []bool {
		m := make([]bool, n)
		for _, i := range idx {
			m[i] = true
		}
		return m
	}
	with := func(f func(*SignalInputs)) SignalObservation {
		in := base
		f(&in)
		return ComputeIterationSignals(in)
	}
	// The IG part of novelty alone: distance weight 0.
	p := DefaultSignalParams()
	p.NoveltyDistanceWeight = 0
	base.Params = &p

	last := with(func(in *SignalInputs) { in.NewEvidence = 3 })
	lastMask := with(func(in *SignalInputs) { in.NewRows = mask(9, 10, 11) })
	if last.Novelty != lastMask.Novelty || last.StabilityConf != lastMask.StabilityConf {
		t.Errorf("mask of the last 3 rows: novelty %v, conf %v; NewEvidence=3: %v, %v", lastMask.Novelty, lastMask.StabilityConf, last.Novelty, last.StabilityConf)
	}
	none := with(func(in *SignalInputs) { in.NewEvidence = 5; in.NewRows = mask() })
	if none.Novelty != 0 {
		t.Errorf("empty mask (overriding NewEvidence = 5): novelty %v, want 0", none.Novelty)
	}
	// Rows 2 and 5 new, the rest old: the IG is that of rows 2, 5 against
	// the other ten, as if they were the last two.
	scattered := with(func(in *SignalInputs) { in.NewRows = mask(2, 5) })
	moved := append(append([][]float64{}, rows[:2]...), rows[3:5]...)
	moved = append(moved, rows[6:]...)
	moved = append(moved, rows[2], rows[5])
	want := MeanInformationGain(moved[10:], moved[:10])
	if math.Abs(scattered.Novelty-want) > 1e-6 {
		t.Errorf("scattered mask: novelty %v, want MeanInformationGain of the two rows %v", scattered.Novelty, want)
	}
	if math.Abs(scattered.Novelty-last.Novelty) < 1e-9 {
		t.Errorf("scattered and last rows give the same novelty %v: the mask is not used", scattered.Novelty)
	}
}
