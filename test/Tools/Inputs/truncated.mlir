func.func @truncated(%x: tensor<2xf32>
