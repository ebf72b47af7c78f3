package main

import "strings"

// sysPropFlag collects repeated -D key=value flags of `corral server`.
type sysPropFlag []string

func (f *sysPropFlag) String() string { return strings.Join(*f, " ") }

func (f *sysPropFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}
