// Every file of this target sees the shared test support (the process runner, temporary
// folders, lock boxes) without importing it.
@_exported import StoreTestSupport
