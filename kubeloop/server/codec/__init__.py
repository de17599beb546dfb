"""Content negotiation and encoding of API responses (the codec seam).

:mod:`~kubeloop.server.codec.negotiation` reads ``Accept`` into a media type and an optional
``as=`` conversion; :mod:`~kubeloop.server.codec.metadata` holds the PartialObjectMetadata
views; :mod:`~kubeloop.server.codec.encoding` turns bodies into bytes per media type; and
:mod:`~kubeloop.server.codec.output` ties them together for one request.
:mod:`~kubeloop.server.codec.protobuf` is ``application/vnd.kubernetes.protobuf`` (bodies, lists,
watch frames), from the wire facts of :mod:`kubeloop.server.kinds.wire`.
"""
