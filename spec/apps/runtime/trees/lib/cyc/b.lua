return { c = require("cyc.c") }
