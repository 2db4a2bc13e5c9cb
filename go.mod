module github.com/timealign/timealign

go 1.25.0

require (
	github.com/stretchr/testify v1.10.0
	github.com/tiiuae/rclgo v0.0.0-20240131135202-56b24e11219b
	gonum.org/v1/gonum v0.16.0
	gopkg.in/yaml.v3 v3.0.1
	pgregory.net/rapid v1.2.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
)
