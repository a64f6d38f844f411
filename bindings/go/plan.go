package minlsh

/*
#include <minlsh.h>
*/
import "C"

import (
	"fmt"
)

// PlanMode says how Plan chooses (bands, rows) (MINLSH_PLAN_*).
type PlanMode int

const (
	PlanRule     PlanMode = 1 // b = floor(k/r), r minimising |(1/b)^(1/r) - t|
	PlanBalanced PlanMode = 2 // minimise WeightFP * FP area + WeightFN * FN area
	PlanRecall   PlanMode = 3 // least FP area with P(candidate | t) >= TargetRecall
)

// PlanOptions are the planner's inputs; zero fields take the library's
// defaults: Mode PlanBalanced, K 128, Threshold 0.8, weights 0.5 and 0.5
// (when both are 0), TargetRecall 0.99.
type PlanOptions struct {
	Threshold    float64
	K            int
	Mode         PlanMode
	WeightFP     float64
	WeightFN     float64
	TargetRecall float64
}

// PlanResult is the chosen banding with the false-positive area (integral
// of P(s) over [0, t]) and false-negative area (of 1 - P(s) over [t, 1]).
type PlanResult struct {
	Bands, Rows    int
	FPArea, FNArea float64
}

// Plan chooses (bands, rows) for a threshold (minlsh_plan_compute).
func Plan(o PlanOptions) (PlanResult, error) {
	var po C.minlsh_plan_options
	if err := check(C.minlsh_plan_options_init(&po, C.MINLSH_PLAN_OPTIONS_VERSION),
		"minlsh_plan_options_init"); err != nil {
		return PlanResult{}, err
	}
	if o.Mode != 0 {
		po.mode = C.uint32_t(o.Mode)
	}
	if o.K != 0 {
		if o.K < 0 || o.K > 1<<31 {
			return PlanResult{}, paramError("minlsh_plan_compute", fmt.Sprintf("k = %d", o.K))
		}
		po.k = C.uint32_t(o.K)
	}
	if o.Threshold != 0 {
		po.threshold = C.double(o.Threshold)
	}
	if o.WeightFP != 0 || o.WeightFN != 0 {
		po.weight_fp = C.double(o.WeightFP)
		po.weight_fn = C.double(o.WeightFN)
	}
	if o.TargetRecall != 0 {
		po.target_recall = C.double(o.TargetRecall)
	}
	var b, r C.uint32_t
	var fp, fn C.double
	if rc := C.minlsh_plan_compute(&b, &r, &fp, &fn, &po); rc != 0 {
		return PlanResult{}, newError(rc, "minlsh_plan_compute", fmt.Sprintf(
			"threshold %g, k %d, mode %d, weights %g/%g, target recall %g", float64(po.threshold),
			int(po.k), int(po.mode), float64(po.weight_fp), float64(po.weight_fn),
			float64(po.target_recall)))
	}
	return PlanResult{Bands: int(b), Rows: int(r), FPArea: float64(fp), FNArea: float64(fn)}, nil
}

func bandsRows(op string, bands, rows int) (C.uint32_t, C.uint32_t, error) {
	if bands < 0 || rows < 0 || bands > 1<<31 || rows > 1<<31 {
		return 0, 0, paramError(op, fmt.Sprintf("bands %d, rows %d", bands, rows))
	}
	return C.uint32_t(bands), C.uint32_t(rows), nil
}

// Probability is P(candidate | s) = 1 - (1 - s^rows)^bands.
func Probability(s float64, bands, rows int) (float64, error) {
	b, r, err := bandsRows("minlsh_plan_probability", bands, rows)
	if err != nil {
		return 0, err
	}
	var out C.double
	err = check(C.minlsh_plan_probability(&out, b, r, C.double(s)), "minlsh_plan_probability")
	return float64(out), err
}

// Threshold is the rule-of-thumb threshold (1/bands)^(1/rows).
func Threshold(bands, rows int) (float64, error) {
	b, r, err := bandsRows("minlsh_plan_threshold", bands, rows)
	if err != nil {
		return 0, err
	}
	var out C.double
	err = check(C.minlsh_plan_threshold(&out, b, r), "minlsh_plan_threshold")
	return float64(out), err
}

// BandKeys are the band keys of a signature (docs/lsh.md, "Band keys"):
// two documents are LSH candidates iff they share (j, key j) for some j.
func BandKeys(sig []uint32, bands, rows int) ([]uint64, error) {
	b, r, err := bandsRows("minlsh_band_keys", bands, rows)
	if err != nil {
		return nil, err
	}
	keys := make([]uint64, bands)
	var n C.size_t
	if rc := C.minlsh_band_keys(u32Ptr(sig), C.size_t(len(sig)), b, r, u64Ptr(keys),
		C.size_t(len(keys)), &n); rc != 0 {
		return nil, newError(rc, "minlsh_band_keys",
			fmt.Sprintf("bands %d, rows %d, k %d", bands, rows, len(sig)))
	}
	return keys[:n], nil
}
