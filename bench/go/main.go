// Command workqueue measures client-go's work queue (k8s.io/client-go/util/workqueue) on the
// workload of kubeloop's bench/workqueue.py, so the two can be compared per CPU second.
//
// Workload (the same as the Python side): adds arrive in bursts of -chunk; after each burst
// the producer yields and one worker goroutine Gets and Dones everything queued, with no work
// in between. "distinct" adds a new key every time; "duplicates" adds each key of a burst ten
// times (a tenth as many keys per burst), so nine adds in ten collapse.
//
// With GOMAXPROCS=1 (the default here: one core per contestant, as the Python side has) the
// producer's runtime.Gosched after a burst hands the processor to the worker, which drains
// the queue until its Get blocks: the same interleaving as the asyncio benchmark.
//
// Metrics "on" gives the queue a name and a MetricsProvider over prometheus client_golang
// vectors on a private registry, with the families and buckets kubeloop's
// PrometheusMetricsProvider exports (controller-runtime's pkg/metrics/workqueue.go shape,
// label "name" only); the per-operation work is client-go's defaultQueueMetrics.
//
// Output: one line per run, "adds_per_cpu_second gets", CPU time of this process
// (getrusage, user+system) around the run only.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

var durationBuckets = prometheus.ExponentialBuckets(10e-9, 10, 12)

type provider struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func newProvider(registry *prometheus.Registry) *provider {
	labels := []string{"name"}
	p := &provider{
		depth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "depth", Help: "Current depth of the work queue.",
		}, labels),
		adds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "workqueue", Name: "adds_total", Help: "Total adds handled by the work queue.",
		}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: "queue_duration_seconds",
			Help: "Seconds an item waits in the work queue.", Buckets: durationBuckets,
		}, labels),
		work: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem: "workqueue", Name: "work_duration_seconds",
			Help: "Seconds a worker takes to process an item.", Buckets: durationBuckets,
		}, labels),
		unfinished: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "unfinished_work_seconds", Help: "Summed age of items in process.",
		}, labels),
		longest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Subsystem: "workqueue", Name: "longest_running_processor_seconds", Help: "Age of the oldest item in process.",
		}, labels),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "workqueue", Name: "retries_total", Help: "Total retries handled by the work queue.",
		}, labels),
	}
	registry.MustRegister(p.depth, p.adds, p.latency, p.work, p.unfinished, p.longest, p.retries)
	return p
}

func (p *provider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return p.depth.WithLabelValues(name)
}
func (p *provider) NewAddsMetric(name string) workqueue.CounterMetric {
	return p.adds.WithLabelValues(name)
}
func (p *provider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return p.latency.WithLabelValues(name)
}
func (p *provider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return p.work.WithLabelValues(name)
}
func (p *provider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.unfinished.WithLabelValues(name)
}
func (p *provider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return p.longest.WithLabelValues(name)
}
func (p *provider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return p.retries.WithLabelValues(name)
}

// makeBursts mirrors make_bursts in bench/workqueue.py.
func makeBursts(adds, chunk int, duplicates bool) [][]int {
	var bursts [][]int
	next := 0
	for i := 0; i < adds/chunk; i++ {
		burst := make([]int, 0, chunk)
		if duplicates {
			for r := 0; r < 10; r++ {
				for k := 0; k < chunk/10; k++ {
					burst = append(burst, next+k)
				}
			}
			next += chunk / 10
		} else {
			for k := 0; k < chunk; k++ {
				burst = append(burst, next+k)
			}
			next += chunk
		}
		bursts = append(bursts, burst)
	}
	return bursts
}

func cpuTime() time.Duration {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		panic(err)
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}

func run(bursts [][]int, metrics bool) int {
	config := workqueue.TypedQueueConfig[int]{}
	if metrics {
		config.Name = "bench"
		config.MetricsProvider = newProvider(prometheus.NewRegistry())
	}
	queue := workqueue.NewTypedWithConfig(config)
	gets := 0
	finished := make(chan struct{})
	go func() {
		for {
			item, shutdown := queue.Get()
			if shutdown {
				close(finished)
				return
			}
			gets++
			queue.Done(item)
		}
	}()
	runtime.Gosched()
	for _, burst := range bursts {
		for _, key := range burst {
			queue.Add(key)
		}
		for queue.Len() > 0 {
			runtime.Gosched()
		}
	}
	queue.ShutDownWithDrain()
	<-finished
	return gets
}

func main() {
	adds := flag.Int("adds", 200000, "adds per run")
	chunk := flag.Int("chunk", 1000, "adds per burst")
	repeat := flag.Int("repeat", 1, "runs; one output line each")
	pattern := flag.String("pattern", "distinct", "distinct or duplicates")
	metrics := flag.Bool("metrics", false, "name the queue and give it the Prometheus provider")
	procs := flag.Int("procs", 1, "GOMAXPROCS")
	flag.Parse()
	if *pattern != "distinct" && *pattern != "duplicates" {
		fmt.Fprintln(os.Stderr, "-pattern must be distinct or duplicates")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(*procs)
	total := *adds - *adds%*chunk
	bursts := makeBursts(total, *chunk, *pattern == "duplicates")
	for i := 0; i < *repeat; i++ {
		runtime.GC()
		debug.FreeOSMemory()
		started := cpuTime()
		gets := run(bursts, *metrics)
		elapsed := cpuTime() - started
		fmt.Printf("%.0f %d\n", float64(total)/elapsed.Seconds(), gets)
	}
}
