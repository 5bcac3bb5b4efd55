classdef MaxPoolLayer < nnet.layer.Layer
%MAXPOOLLAYER  A custom max pooling layer (2-D, 'SSCB') for dlnetwork, computed by poolkit.
%   layer = poolkit.MaxPoolLayer([2 2], 'Stride', 2, 'Padding', 0, 'Name', 'pool1')
%   predict is poolkit.maxpool; forward keeps the compact indices (one byte per output) as memory and backward
%   is poolkit.maxpool_backward on them.
%   NOT RUN HERE: poolkit's machines have no MATLAB. Only the functions it calls are tested (in Octave).
  properties
    PoolSize
    Stride = 1
    Padding = 0
  end
  methods
    function layer = MaxPoolLayer(poolsize, varargin)
      p = inputParser;
      p.addParameter('Stride', 1);
      p.addParameter('Padding', 0);
      p.addParameter('Name', '');
      p.parse(varargin{:});
      layer.PoolSize = poolsize;
      layer.Stride = p.Results.Stride;
      layer.Padding = p.Results.Padding;
      layer.Name = p.Results.Name;
      layer.Description = 'poolkit max pooling';
    end
    function Z = predict(layer, X)
      o = layer.options();
      Z = poolkit.maxpool(X, layer.PoolSize, o{:});
    end
    function [Z, memory] = forward(layer, X)
      o = layer.options();
      [Z, indx, info] = poolkit.maxpool(X, layer.PoolSize, o{:}, 'Indices', 'compact');
      memory = {indx, info};
    end
    function dLdX = backward(~, ~, ~, dLdZ, memory)
      dLdX = poolkit.maxpool_backward(dLdZ, memory{1}, memory{2});
    end
  end
  methods (Access = private)
    function o = options(layer)
      % A custom layer that is not Formattable receives unformatted data laid out as 'SSCB'.
      o = {'Stride', layer.Stride, 'Padding', layer.Padding, 'DataFormat', 'SSCB'};
    end
  end
end
