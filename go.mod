module github.com/brigadesim/brigade

go 1.26.8

require (
	github.com/google/btree v1.1.3
	github.com/spf13/pflag v1.1.0
	gonum.org/v1/gonum v0.17.0
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
