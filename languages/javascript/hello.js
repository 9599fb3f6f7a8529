console.log("hello from javascript");
