package kube

import (
	_ "github.com/brigadesim/brigade/policies"
	_ "k8s.io/client-go/kubernetes"
)
