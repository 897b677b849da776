// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @flattened(%x: tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>) {
  %u, %i, %r, %c = nn.unique %x {sorted = false} : (tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)
  func.return %u, %i, %r, %c : tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>
}
// CHECK:      %u, %i, %r, %c = nn.unique %x {sorted = false} : (tensor<3x4xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<12xi64>, tensor<?xi64>)

// -----
func.func @along_an_axis(%x: tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) {
  %u, %i, %r, %c = nn.unique %x {axis = 1 : i64} : (tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  func.return %u, %i, %r, %c : tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>
}
// CHECK:      %u, %i, %r, %c = nn.unique %x {axis = 1 : i64} : (tensor<3x4xi32>) -> (tensor<3x?xi32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
