// placeholder until the device sources land
