classdef MaxPoolFunction < deep.DifferentiableFunction
%MAXPOOLFUNCTION  poolkit.maxpool as a function dlgradient differentiates (MATLAB R2024a+, inside dlfeval).
%   f = poolkit.MaxPoolFunction([2 2], 'Stride', 2);
%   Y = f(X);                              % X: a formatted dlarray, e.g. 'SSCB'
%   The forward keeps the compact indices (one byte per output) as its memory; the backward is
%   poolkit.maxpool_backward on them.
%   NOT RUN HERE: poolkit's machines have no MATLAB. Only the functions it calls are tested (in Octave).
  properties
    PoolSize
    Options
  end
  methods
    function fcn = MaxPoolFunction(poolsize, varargin)
      fcn@deep.DifferentiableFunction(1, SaveInputsForBackward=false, SaveOutputsForBackward=false, ...
                                      NumMemoryValues=2);
      fcn.PoolSize = poolsize;
      fcn.Options = varargin;
    end
    function [Y, indx, info] = forward(fcn, X)
      [Y, indx, info] = poolkit.maxpool(X, fcn.PoolSize, fcn.Options{:}, 'Indices', 'compact');
    end
    function dX = backward(~, dY, ~, varargin)
      % varargin ends with the two memory values of forward: the compact indices and their struct
      dX = poolkit.maxpool_backward(dY, varargin{end - 1}, varargin{end});
    end
  end
end
