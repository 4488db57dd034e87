#include <cstdio>
int main() { std::puts("tnrt: under construction"); return 0; }
