// placeholder until the cuda sources land
