module ratchetrng/chacha8state

go 1.23
