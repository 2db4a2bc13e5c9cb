module github.com/timealign/timealign

go 1.25.0

require (
	github.com/stretchr/testify v1.10.0 // indirect
	gonum.org/v1/gonum v0.16.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	pgregory.net/rapid v1.2.0 // indirect
)
