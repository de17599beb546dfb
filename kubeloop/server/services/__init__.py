"""Services, Endpoints and EndpointSlices: what these kinds need beyond generic storage.

* :mod:`.defaults` and :mod:`.validation`: ``SetDefaults_Service`` and ``ValidateService`` (and
  the small rules of Endpoints and EndpointSlices), added to the admission dispatch table by
  :mod:`.admission`;
* :mod:`.fields`: the Service field selectors;
* :mod:`.ipallocator` and :mod:`.portallocator`: pure range allocators (cluster IPs from the
  service CIDR, node ports from the node-port range);
* :mod:`.allocation`: upstream's service REST ``beginCreate`` / ``beginUpdate`` (family
  initialisation, cluster IP and node port allocation, patching of allocated values) as pure
  functions over the set of values in use;
* :mod:`.hooks`: the thin I/O around it, deriving what is in use from the stored Services (so
  an allocation survives restarts and is released when its Service goes);
* :mod:`.kubernetes_service`: the ``default/kubernetes`` Service and its endpoints, kept by the
  server at start as kube-apiserver's kubernetesservice controller does.
"""
