return { b = require("cyc.b") }
