{
  "targets": [
    {
      "target_name": "wal_index",
      "sources": ["wal_index.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
