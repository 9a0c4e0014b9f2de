return { a = require("cyc.a") }
