module github.com/brigadesim/brigade

go 1.26.8

require (
	github.com/google/btree v1.1.3 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
	sigs.k8s.io/yaml v1.6.0 // indirect
)
