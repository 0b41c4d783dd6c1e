// The compiled addon (node-gyp rebuild at install). See wal_index.c.
module.exports = require('./build/Release/wal_index.node')
