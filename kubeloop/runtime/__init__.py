"""Controller machinery: work queues, informers, the manager and its helpers."""
