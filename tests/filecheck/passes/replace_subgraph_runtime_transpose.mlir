// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// dynamo's k.transpose(-2, -1) with dynamic axes: reshape to [-1, S, E] and back to
// [B, H, E, S], the shapes read from k at run time (E, static, folded to a constant):
// one Permute.
func.func @folded(%k: tensor<?x2x?x8xf32>) -> tensor<?x2x8x?xf32> {
  %s = nn.shape_of %k : (tensor<?x2x?x8xf32>) -> tensor<4xi64>
  %rows = nn.slice %s {begins = array<i64: -2>, ends = array<i64: -1>} : (tensor<4xi64>) -> tensor<1xi64>
  %lead = nn.slice %s {begins = array<i64: -9223372036854775808>, ends = array<i64: -2>} : (tensor<4xi64>) -> tensor<2xi64>
  %rest = nn.constant dense<-1> : tensor<1xi64>
  %width = nn.constant dense<8> : tensor<1xi64>
  %t1 = nn.concat %rest, %rows, %width {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %t2 = nn.concat %lead, %width, %rows {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %f = nn.reshape_to %k, %t1 : (tensor<?x2x?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  %p = nn.permute %f {order = array<i64: 0, 2, 1>} : (tensor<?x?x8xf32>) -> tensor<?x8x?xf32>
  %kt = nn.reshape_to %p, %t2 {name = "kt"} : (tensor<?x8x?xf32>, tensor<4xi64>) -> tensor<?x2x8x?xf32>
  func.return %kt : tensor<?x2x8x?xf32>
}
// CHECK-LABEL: func.func @folded
// CHECK-NEXT:    %[[T:[a-z_0-9]+]] = nn.permute %k {order = array<i64: 0, 1, 3, 2>, name = "kt"} : (tensor<?x2x?x8xf32>) -> tensor<?x2x8x?xf32>
// CHECK-NEXT:    func.return %[[T]]

// -----

// The reshape back to [B, H, S, E] (not swapped): not a transpose of k, left alone.
func.func @not_swapped(%k: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %s = nn.shape_of %k : (tensor<?x2x?x8xf32>) -> tensor<4xi64>
  %rows = nn.slice %s {begins = array<i64: -2>, ends = array<i64: -1>} : (tensor<4xi64>) -> tensor<1xi64>
  %lead = nn.slice %s {begins = array<i64: -9223372036854775808>, ends = array<i64: -2>} : (tensor<4xi64>) -> tensor<2xi64>
  %rest = nn.constant dense<-1> : tensor<1xi64>
  %width = nn.constant dense<8> : tensor<1xi64>
  %t1 = nn.concat %rest, %rows, %width {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %t2 = nn.concat %lead, %rows, %width {axis = 0 : i64} : (tensor<2xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  %f = nn.reshape_to %k, %t1 : (tensor<?x2x?x8xf32>, tensor<3xi64>) -> tensor<?x?x8xf32>
  %p = nn.permute %f {order = array<i64: 0, 2, 1>} : (tensor<?x?x8xf32>) -> tensor<?x8x?xf32>
  %kt = nn.reshape_to %p, %t2 : (tensor<?x8x?xf32>, tensor<4xi64>) -> tensor<?x2x?x8xf32>
  func.return %kt : tensor<?x2x?x8xf32>
}
// CHECK-LABEL: func.func @not_swapped
// CHECK:         nn.reshape_to
// CHECK:         nn.permute %f {order = array<i64: 0, 2, 1>}
// CHECK:         nn.reshape_to
