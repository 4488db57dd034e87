// placeholder until the cpu sources land
