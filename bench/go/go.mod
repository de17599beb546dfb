module kubeloop.local/bench/workqueue

go 1.24.0

require (
	github.com/prometheus/client_golang v1.22.0
	k8s.io/client-go v0.33.9
)
