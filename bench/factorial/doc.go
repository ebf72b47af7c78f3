// Package factorial is `corral-bench factorial`: a 2^k r factorial
// experiment over server count, value size and durability, each factor's
// effect with its confidence interval and share of the variation
// (Config, DefaultConfig, Run, Report).
package factorial
