package durability

func durabilityF64(v float64) *float64 { return &v }
