"""HTTP handlers, one module per verb family: read (get, list), write (create, update), patch,
delete, and the scale subresource."""
