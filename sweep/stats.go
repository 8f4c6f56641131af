package sweep

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// MeanCI returns the mean of xs and the half-width of its two-sided 95%
// confidence interval, Student t with n−1 degrees of freedom; the
// half-width is NaN with fewer than two values.
func MeanCI(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	sd := stddev(xs, mean)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	return mean, t * sd / math.Sqrt(n)
}

func stddev(xs []float64, mean float64) float64 {
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// PairedT is the paired t-test of a against b (same length, paired by
// position): the mean difference a−b, the t statistic and the two-sided
// p-value, with n−1 degrees of freedom. With fewer than two pairs t and p
// are NaN. When every difference is the same, p is 1 if it is 0 and 0
// otherwise (t is ±Inf).
func PairedT(a, b []float64) (meanDiff, t, p float64) {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	if len(d) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	for _, x := range d {
		meanDiff += x
	}
	n := float64(len(d))
	meanDiff /= n
	if len(d) < 2 {
		return meanDiff, math.NaN(), math.NaN()
	}
	sd := stddev(d, meanDiff)
	if sd == 0 {
		if meanDiff == 0 {
			return 0, 0, 1
		}
		return meanDiff, math.Copysign(math.Inf(1), meanDiff), 0
	}
	t = meanDiff / (sd / math.Sqrt(n))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	p = 2 * dist.Survival(math.Abs(t))
	return meanDiff, t, p
}
